from ..server.conftest import fake_media  # noqa: F401 - the fixture, shared
