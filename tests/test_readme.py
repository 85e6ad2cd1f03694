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


def _setup_commands():
    """The commands of the README's "Set up" section, in order (its bash blocks)."""
    text = (REPO / "README.md").read_text()
    section = text.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return [c.strip() for c in re.findall(r"```bash\n(.*?)```", section, re.S)]


def test_ci_runs_the_readme_setup_first_and_verbatim():
    """CI proves what a new user meets: the README's install + demo and
    test-extra + pytest commands, word for word, before any other install."""
    commands = _setup_commands()[:2]
    assert commands[0] == "python -m pip install . && python -m gpumatch demo"
    assert commands[1] == 'python -m pip install ".[test]" && python -m pytest -q'
    ci = (REPO / ".ci" / "run").read_text()
    code = "\n".join(line for line in ci.splitlines() if not line.lstrip().startswith("#"))
    at = [code.find(c) for c in commands]
    assert all(a >= 0 for a in at), "a README set-up command is not in .ci/run as written"
    assert at[0] < at[1]
    first_install = min(code.find(w) for w in ("pip install", "pip3 install", "uv ") if w in code)
    assert at[0] <= first_install < at[0] + len(commands[0]), "something is installed before the README's commands"
