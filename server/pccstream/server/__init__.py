"""The pccstream server: WebTransport over HTTP/3 (aioquic) plus the web app over HTTP."""
