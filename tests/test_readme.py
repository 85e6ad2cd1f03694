"""The README's API tour runs as written (on the default backend)."""

import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parent.parent


def test_readme_api_tour_runs(capsys):
    text = (REPO / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "README has no python example"
    namespace = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)
    res, match = namespace["res"], namespace["match"]
    assert res.size == int((match >= 0).sum()) == namespace["rank"]
    assert namespace["flow"].flow_value > 0
