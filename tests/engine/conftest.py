"""The engine tests' fixtures. They live in engine_helpers.py, which the tests import by that name:
every test folder has a conftest.py, so a test that imported `conftest` could get another
folder's."""

from engine_helpers import *  # noqa: F403 - pytest finds the fixtures in this module's names
