"""HTML pages (Jinja2 + htmx + SSE), one module per resource, named as the API's module of the
same resource in app/api/ where it has one (submissions, scoreboard, history, custom_runs,
admin, users, ...). `rendering` is what every page is made with, views/ what pages draw with,
`errors` the styled error pages."""
