"""The project's one YAML reader (cdc_env/yamlfile.py) by hand: a key given twice, a merge key,
bytes that are not UTF-8, broken YAML and an unhashable key, each one line naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cdc_env import yamlfile
from cdc_env.yamlfile import YamlFileError, read_yaml


def refusal(tmp_path: Path, raw: bytes) -> str:
    path = tmp_path / "table.yaml"
    path.write_bytes(raw)
    with pytest.raises(YamlFileError) as error:
        read_yaml(path)
    return str(error.value).replace(str(tmp_path), "DIR")


def test_a_key_given_twice_names_it_and_its_two_lines(tmp_path: Path) -> None:
    assert refusal(tmp_path, b"a: 1\nb:\n  c: 2\n  c: 3\n") == (
        "DIR/table.yaml, line 4: not valid YAML: key 'c' is given twice (lines 3 and 4); keep one")
    assert refusal(tmp_path, b"a: 1\na: 2\n") == (
        "DIR/table.yaml, line 2: not valid YAML: key 'a' is given twice (lines 1 and 2); keep one")


def test_merge_keys_and_keys_given_once_read_as_data(tmp_path: Path) -> None:
    path = tmp_path / "merge.yaml"
    path.write_text("base: &b {x: 1}\nother:\n  <<: *b\n  y: 2\nthird:\n  <<: *b\n  z: 3\n", encoding="utf-8")
    assert read_yaml(path) == {"base": {"x": 1}, "other": {"x": 1, "y": 2}, "third": {"x": 1, "z": 3}}
    (tmp_path / "accents.yaml").write_text("oiseau: Fauvette\nmot: vélutée\n", encoding="utf-8")
    assert read_yaml(str(tmp_path / "accents.yaml")) == {"oiseau": "Fauvette", "mot": "vélutée"}


def test_bytes_that_are_not_utf8_name_their_place(tmp_path: Path) -> None:
    assert refusal(tmp_path, b"a: 1\nb: caf\xe9\n") == (
        "DIR/table.yaml: not UTF-8 text (byte 11, line 2); save the file as UTF-8")


def test_broken_yaml_and_an_unhashable_key_say_where(tmp_path: Path) -> None:
    assert refusal(tmp_path, b"a: [1, 2\nb: 3\n") == (
        "DIR/table.yaml, line 2: not valid YAML: while parsing a flow sequence expected ',' or ']', but got ':'")
    assert refusal(tmp_path, b"? [1, 2]\n: 3\n") == (
        "DIR/table.yaml, line 1: not valid YAML: while constructing a mapping found unhashable key")


def test_keys_after_a_merge_key_or_an_unhashable_key_are_still_checked(tmp_path: Path) -> None:
    assert refusal(tmp_path, b"base: &b {x: 1}\nother:\n  <<: *b\n  y: 2\n  y: 3\n") == (
        "DIR/table.yaml, line 5: not valid YAML: key 'y' is given twice (lines 4 and 5); keep one")
    assert refusal(tmp_path, b"? [1, 2]\n: 3\na: 1\na: 2\n") == (
        "DIR/table.yaml, line 4: not valid YAML: key 'a' is given twice (lines 3 and 4); keep one")


def test_a_character_yaml_refuses_is_named_with_its_line_in_one_line(tmp_path: Path) -> None:
    # PyYAML's own text spans two lines and counts characters; ours is one line with the line.
    assert refusal(tmp_path, b"a: 1\nb: \x07\n") == (
        "DIR/table.yaml, line 2: not valid YAML: unacceptable character #x0007 (special characters are "
        "not allowed); remove it")
    assert refusal(tmp_path, "\na: é\n\nb: 1 \x1f\n".encode()) == (  # the first line blank: counted too
        "DIR/table.yaml, line 4: not valid YAML: unacceptable character #x001f (special characters are "
        "not allowed); remove it")


@pytest.mark.parametrize(("error", "message"), [
    (yaml.MarkedYAMLError("while reading", None, "something odd"),
     "DIR/table.yaml: not valid YAML: while reading something odd"),
    (yaml.YAMLError("something odd\n  in a place"), "DIR/table.yaml: not valid YAML (something odd in a place)"),
])
def test_an_error_without_a_place_is_still_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     error: yaml.YAMLError, message: str) -> None:
    # PyYAML gives every error it raises while loading a place; these guards are for the others.
    def load(*_args: object, **_kwargs: object) -> None:
        raise error

    monkeypatch.setattr(yamlfile.yaml, "load", load)
    assert refusal(tmp_path, b"a: 1\n") == message
