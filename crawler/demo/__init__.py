"""The bundled demo web and the loopback HTTP server that serves it (and the tests' webs).

``routes.py`` is the routing table (which URL gets which answer), ``webserver.py`` serves it over
HTTP, ``dates.py`` dates the demo web for its demo day and ``folder.py`` keeps a demo's port and day
for the next demo. ``censusworld.py`` builds the loopback world of a ``commoncrawl`` census, whose
archive ``rangeserver.py`` serves.
"""
