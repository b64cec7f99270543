"""What the pages draw with: values shaped from stored rows for the templates; no routes here.

- `template_helpers` (verdict colours, "12 s ago", plain text, the time-vs-limit bars) and
  `clock` (times in the course's time zone): the templates' globals and filters;
- `board_html` (the scoreboard's table, built once per board version) and `gpu_tabs`: the
  scoreboard page;
- `feedback` (figures, the SVG charts, the diagnosis) and `error_maps`: a submission's page (an
  error map shows on a custom run's page too).
"""
