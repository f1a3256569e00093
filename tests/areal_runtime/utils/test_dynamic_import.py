# SPDX-License-Identifier: Apache-2.0
"""import_from_string raises AReaL's exception types with AReaL's messages."""

import re

import pytest

from areal_runtime.infra.workflow_resolution import load_object
from areal_runtime.utils.dynamic_import import import_from_string


def test_imports_the_last_dotted_name():
    assert import_from_string("os.path.join") is __import__("os").path.join


@pytest.mark.parametrize("bad", ["", None, 3, "nodots"])
def test_bad_paths_are_value_errors(bad):
    with pytest.raises(ValueError, match="Invalid module path"):
        import_from_string(bad)


def test_missing_module_is_an_import_error_naming_both():
    with pytest.raises(ImportError, match="Failed to import module 'no_such_mod' from path"):
        import_from_string("no_such_mod.Thing")


def test_missing_name_is_an_attribute_error():
    with pytest.raises(
        AttributeError, match=re.escape("Module 'os.path' has no attribute 'nope'.")
    ):
        import_from_string("os.path.nope")


def test_colon_form_is_the_command_lines_not_import_from_strings():
    assert load_object("os.path:join") is __import__("os").path.join
    with pytest.raises(AttributeError):
        import_from_string("os.path:join")
    with pytest.raises(ImportError, match=re.escape("cannot load 'os.path:nope'")):
        load_object("os.path:nope")
