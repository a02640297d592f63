"""The run browser (``omlab view``): a local web site over a results folder, with no kernel.

:mod:`~omlab.viz.site.pages` renders each page from frames (Jinja2 templates), :mod:`~omlab.viz.site.views`
reads what each page shows from the results folder, :mod:`~omlab.viz.site.server` serves them (tornado).
"""
