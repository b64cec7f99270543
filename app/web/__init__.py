"""The web layer's shared parts: the route dependencies (`deps`) and the request body guard
(`body_guard`), above the services they call."""
