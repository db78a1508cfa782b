"""headwire.runtime.trust: the trust list, the flag and the environment variable."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from headwire.runtime.trust import add_trusted, is_trusted, trusted_folders


def test_trust_list(tmp_path: Path) -> None:
    data, proj = tmp_path / "data", tmp_path / "proj"
    (proj / "sub").mkdir(parents=True)
    assert not is_trusted(proj, data, env={})
    assert is_trusted(proj, data, flag=True, env={})
    assert is_trusted(proj, data, env={"HEADWIRE_TRUST_PROJECT": "1"})
    assert not is_trusted(proj, data, env={"HEADWIRE_TRUST_PROJECT": "0"})
    add_trusted(proj, data)
    assert is_trusted(proj / "sub", data, env={})
    assert not is_trusted(tmp_path, data, env={})
    assert stat.S_IMODE((data / "trusted.json").stat().st_mode) == 0o600
    assert trusted_folders(data) == [proj.resolve()]


def test_malformed_list_trusts_nothing(tmp_path: Path) -> None:
    for text in ("{", "[]", json.dumps({"folders": "x"}), json.dumps({"folders": ["rel"]})):
        (tmp_path / "trusted.json").write_text(text)
        assert not is_trusted(tmp_path / "rel", tmp_path, env={})
