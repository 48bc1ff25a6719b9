"""The human surfaces: `skilleval view` (a live local web app) and `skilleval report` (one
self-contained HTML file). Both show the same pages from the same JSON: the server answers
``/api/...`` from the store and the recorded workspaces; the report embeds those answers.

Modules: ``queries`` / ``trigger_data`` / ``opt_data`` / ``functional_data`` (questions to the
store and workspaces), ``files`` (safe file access and rendering of output files),
``feedback`` (skill-creator's feedback.json), ``api`` (path -> JSON), ``render`` (Jinja2),
``server`` (loopback HTTP), ``report`` and ``cli`` (the two verbs).
"""
