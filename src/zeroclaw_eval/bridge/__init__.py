"""The loopback model bridge: an HTTP server speaking three model APIs."""
