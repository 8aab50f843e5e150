"""`pccstream demo`: the server, an emulator per arm, and one URL to open the dashboard."""
