"""The scoreboard: the standing kept at write time (`standing/`), boards served from memory
(`boards`, `cache`, `formats`), its rows and CSV (`rows`), and the grades export (`grades`)."""
