"""The one YAML reader of the project (rulesets, training configs, lexicons).

PyYAML alone lets the last of two equal keys win without a word, and reads bytes that are not
UTF-8 into a UnicodeDecodeError that names no file. Here both are an error that names the file,
and for a key given twice, the key and its two lines.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode
from yaml.reader import ReaderError


class YamlFileError(ValueError):
    """A YAML file that cannot be read as data: not UTF-8, not YAML, or a key given twice.
    The message names the file; callers wrap it in their own kind of error."""


class UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a mapping with one key twice (merge keys `<<` aside)."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: SafeLoader's own error says so below
                continue
            line = key_node.start_mark.line + 1
            if first is not None:
                raise ConstructorError(None, None, f"key {key!r} is given twice (lines {first} and {line}); "
                                       "keep one", key_node.start_mark)
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


def read_yaml(path: str | Path) -> Any:
    """The data of a YAML file. OSError (a missing file, say) is left to the caller, who knows
    what the file is for; every other problem is a YamlFileError of one line naming `path`."""
    path = Path(path)
    if path.exists() and not path.is_file() and not path.is_dir():
        # A pipe would be read until someone writes to it (the command hung), a device forever.
        raise YamlFileError(f"{path}: not a file but a {'pipe' if path.is_fifo() else 'device'}; give a YAML file")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[:error.start].count(b"\n") + 1
        raise YamlFileError(f"{path}: not UTF-8 text (byte {error.start}, line {line}); "
                            "save the file as UTF-8") from None
    try:
        return yaml.load(text, Loader=UniqueKeyLoader)  # a SafeLoader: no arbitrary objects
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        where = f", line {mark.line + 1}" if mark is not None else ""
        problem = " ".join(str(part) for part in (error.context, error.problem) if part)
        raise YamlFileError(f"{path}{where}: not valid YAML: {problem}") from None
    except ReaderError as error:  # PyYAML's own text spans two lines and counts characters
        line = text.count("\n", 0, error.position) + 1
        raise YamlFileError(f"{path}, line {line}: not valid YAML: unacceptable character "
                            f"#x{error.character:04x} ({error.reason}); remove it") from None
    except ValueError as error:  # a value PyYAML cannot make (a traceback): an impossible date, a huge integer
        if "integer string conversion" in str(error):  # over 4,300 digits: Python refuses to convert it
            raise YamlFileError(f"{path}: not valid YAML: a number with more digits than can be read "
                                f"({sys.get_int_max_str_digits()}); shorten it") from None
        raise YamlFileError(f"{path}: not valid YAML: a value that cannot be read ({error}); quote it "
                            "to keep it as text") from None
    except RecursionError:  # `[[[[...` nested past Python's limit: PyYAML's reader is recursive
        raise YamlFileError(f"{path}: not valid YAML: nested too deeply (a damaged file)") from None
    except yaml.YAMLError as error:  # no other kind is raised while loading; one line all the same
        raise YamlFileError(f"{path}: not valid YAML ({' '.join(str(error).split())})") from None


def shown(value: Any, limit: int = 60) -> str:
    """`value` as an error quotes it: its repr, cut to `limit` characters (a whole section of a
    file given where one value was expected must not fill the screen)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _what(data: Any) -> str:
    if data is None:
        return "nothing (it is empty)"
    if isinstance(data, bool):
        return "a yes/no value"
    if isinstance(data, (int, float)):
        return "a number"
    if isinstance(data, str):
        return "a line of text"
    if isinstance(data, list):
        return "a list"
    return f"a {type(data).__name__}"


def wrong_kind(path: str | Path, data: Any, kind: str, keys: Any, example: str) -> str | None:
    """Why `data`, read from `path`, is not a `kind` at all (another file given by mistake: a list,
    a text, a ruleset for a training config, a docker-compose file); None when it may be one (a
    mapping with at least one of `keys`), whose keys the caller then checks one by one. Says what
    the file holds, never its content."""
    if not isinstance(data, dict):
        return f"{path} is not a {kind}: it holds {_what(data)}, where a {kind} is a mapping of keys ({example})"
    known = set(keys)
    if any(isinstance(key, str) and key in known for key in data):
        return None
    found = [shown(key, 30) if not isinstance(key, str) else key[:30] for key in list(data)[:6]]
    more = " …" if len(data) > 6 else ""
    return (f"{path} is not a {kind}: it has none of a {kind}'s keys ({example}); "
            f"found keys: {', '.join(found) or 'none'}{more}")
