"""The one YAML reader of the project (rulesets, training configs, lexicons).

PyYAML alone lets the last of two equal keys win without a word, and reads bytes that are not
UTF-8 into a UnicodeDecodeError that names no file. Here both are an error that names the file,
and for a key given twice, the key and its two lines.
"""

from __future__ import annotations

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
    except yaml.YAMLError as error:  # no other kind is raised while loading; one line all the same
        raise YamlFileError(f"{path}: not valid YAML ({' '.join(str(error).split())})") from None
