"""Wheels and index answers that lie, read by `recipes verify --artifacts` and the one-member
reader: a short ZIP64 extra field, a Content-Length longer or shorter than the body, control
characters in a file name on an index page or in a zip member's name.

Hostile round four: the first two were tracebacks (struct.error, urllib3's ProtocolError), and
the names reached the terminal raw. Each is now one clear message, a non-zero exit, and the
rest of the run unaffected; names are shown escaped (gpuenv.output.shown).
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import pytest

from fatbins import ELF, PTX, container, entry, library, write_wheel
from gpuenv.index.remote_wheel import WheelReadError, read_member
from hostileindex import WHEEL, HostileIndex, serve, verify_cli

LIB = library(container(entry(ELF, 35, os.urandom(400)), entry(PTX, 35, b"p" * 50)))
OTHER = "tensorflow-2.4.4-cp38-cp38-manylinux2010_x86_64.whl"
TF = ("--framework", "tensorflow", "--release", "2.3.4")


def _with_extra(path: Path, member: str, extra: bytes, size: int = 0xFFFFFFFF) -> Path:
    """Give `member`'s central directory entry this extra field and inflated size."""
    data = bytearray(path.read_bytes())
    eocd = data.rfind(b"PK\x05\x06")
    cd_size, cd_offset = struct.unpack_from("<II", data, eocd + 12)
    out, pos = bytearray(), cd_offset
    while pos < cd_offset + cd_size:
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", data, pos + 28)
        record = bytearray(data[pos : pos + 46 + name_len + extra_len + comment_len])
        if record[46 : 46 + name_len] == member.encode():
            struct.pack_into("<I", record, 24, size)
            struct.pack_into("<H", record, 30, len(extra))
            record = record[: 46 + name_len] + extra
        out += record
        pos += 46 + name_len + extra_len + comment_len
    end = bytearray(data[eocd : eocd + 22])
    struct.pack_into("<I", end, 12, len(out))
    path.write_bytes(bytes(data[:cd_offset] + out + end))
    return path


SHORT_ZIP64_EXTRAS = {
    "declares-16-gives-8": b"\x01\x00\x10\x00" + b"\x00" * 8,
    "declares-8-gives-3": b"\x01\x00\x08\x00" + b"\x00" * 3,
    "declares-5": b"\x01\x00\x05\x00" + b"\x00" * 5,
    "no-values": b"\x01\x00\x00\x00",
    "header-cut": b"\x01\x00",
}


@pytest.mark.parametrize("extra", sorted(SHORT_ZIP64_EXTRAS))
def test_a_short_zip64_extra_field_is_a_wheel_read_error(extra: str, tmp_path: Path) -> None:
    wheel = write_wheel(tmp_path / "x-1.0-py3-none-any.whl", {"x/version.py": b"v = 1\n"})
    _with_extra(wheel, "x/version.py", SHORT_ZIP64_EXTRAS[extra])
    with pytest.raises(WheelReadError, match="ZIP64"):
        read_member(wheel.as_uri(), "x/version.py")


def test_verify_reports_a_short_zip64_extra_and_goes_on(tmp_path: Path) -> None:
    folder = tmp_path / "index" / "tensorflow"
    folder.mkdir(parents=True)
    name = "tensorflow/python/_pywrap_tensorflow_internal.so"
    _with_extra(
        write_wheel(folder / WHEEL, {name: LIB}), name, SHORT_ZIP64_EXTRAS["declares-16-gives-8"]
    )
    write_wheel(folder / OTHER, {name: LIB})
    out = verify_cli("--framework", "tensorflow", "--index", (tmp_path / "index").as_uri())
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    [line] = [line for line in out.stdout.splitlines() if WHEEL in line and "ZIP64" in line]
    assert line.startswith("error:")
    assert OTHER in out.stdout  # the next release's wheel was read


@pytest.mark.parametrize("trick", ["long-length", "short-length"])
def test_a_lying_content_length_is_a_wheel_read_error(trick: str, tmp_path: Path) -> None:
    wheel = write_wheel(tmp_path / "x-1.0-py3-none-any.whl", {"x/version.py": b"v = 1\n" * 999})
    with serve(HostileIndex()) as index:
        url = index.file(wheel.name, wheel.read_bytes(), trick)
        with pytest.raises(WheelReadError, match=wheel.name):
            read_member(url, "x/version.py")


@pytest.mark.parametrize("trick", ["long-length", "short-length"])
def test_verify_reports_a_lying_content_length_and_goes_on(trick: str, tmp_path: Path) -> None:
    name = "tensorflow/python/_pywrap_tensorflow_internal.so"
    with serve(HostileIndex()) as index:
        liar = index.file(WHEEL, write_wheel(tmp_path / WHEEL, {name: LIB}).read_bytes(), trick)
        fine = index.file(OTHER, write_wheel(tmp_path / OTHER, {name: LIB}).read_bytes())
        index.page("tensorflow", [(WHEEL, liar), (OTHER, fine)])
        out = verify_cli("--framework", "tensorflow", "--index", index.simple)
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    [line] = [line for line in out.stdout.splitlines() if WHEEL in line]
    assert line.startswith("error:")
    assert OTHER in out.stdout and "1 wheels read" in out.stdout


def test_control_characters_from_the_index_and_the_wheel_are_shown_escaped(
    tmp_path: Path,
) -> None:
    # a build tag is free text to packaging: the index's file name reaches the output
    hostile = "tensorflow-2.3.4-1\x1b[2J\x9b31m-cp38-cp38-manylinux2010_x86_64.whl"
    members = {
        "tensorflow/python/_pywrap\x7f\x9b2J.so": LIB,  # DEL and a C1 escape: not below 32
        "tensorflow/lib\u2028x.so": LIB,
    }
    wheel = write_wheel(tmp_path / "t.whl", members).read_bytes()
    with serve(HostileIndex()) as index:
        index.page("tensorflow", [(hostile, index.file(hostile, wheel))])
        text = verify_cli(*TF, "--index", index.simple)
        data = verify_cli(*TF, "--index", index.simple, "--json")
    assert text.returncode == 1, (text.stdout, text.stderr)  # the row says no PTX for 3.5
    for raw in ("\x1b", "\x9b", "\x7f", "\u2028"):
        assert raw not in text.stdout and raw not in text.stderr
    assert "\\x1b[2J\\x9b31m" in text.stdout  # the wheel's name
    assert "_pywrap\\x7f\\x9b2J.so" in text.stdout and "lib\\u2028x.so" in text.stdout
    findings = json.loads(data.stdout)["findings"]
    assert findings and all("\x1b" not in f["message"] for f in findings)
    assert any("\\x1b[2J" in f["message"] for f in findings)
