"""The bundled demo web and the loopback HTTP server that serves it (and the tests' webs)."""
