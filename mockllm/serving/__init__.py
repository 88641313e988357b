"""The serving path: the ASGI app, one model exchange end to end, the responder that
delivers it, the admin routes, and uvicorn around them."""
