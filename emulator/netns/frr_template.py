"""Renders the Jinja2 FRR configuration templates of a lab's switches (`frr_config:` in a lab
file), for `mrclab deploy` (emulator/netns/frr_template.cc runs this).

    python3 frr_template.py REQUEST.json OUT_DIR

REQUEST.json: {"templates": [{"node": NAME, "template": PATH, "field": "frr_config[0].template",
"variables": {...}}, ...]}. Each rendered configuration is written to OUT_DIR/NAME.conf. On the
first error: exit 2 and one line on stderr, "PATH line N: what is wrong", N being the line of
the template (or of a template it includes) where Jinja2 found it.

Templates see the variables of their switch (node: the plan's node with its interfaces, routes,
ASN, router id, uSID and locator; lab: name, routing, bfd_interval_ms, mtu; generated: the
configuration mrclab would generate). Undefined variables are errors, not empty strings. Blocks
strip their own line (trim_blocks, lstrip_blocks), as in netlab's and Ansible's templates.
"""
import json
import sys
import traceback
from pathlib import Path

import jinja2


def _template_line(error, folder):
    """The file and line of a rendering error: the deepest frame of its traceback that is a
    template (Jinja2 rewrites tracebacks to point into the templates)."""
    where, line = getattr(error, "filename", None), getattr(error, "lineno", None)
    for frame in traceback.extract_tb(error.__traceback__):
        if Path(frame.filename).resolve().is_relative_to(folder) and frame.filename != __file__:
            where, line = frame.filename, frame.lineno
    return where, line


def render(entry, out_dir):
    path = Path(entry["template"])
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(path.parent)), undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, autoescape=False)
    folder = path.parent.resolve()
    try:
        text = env.get_template(path.name).render(**entry["variables"])
    except jinja2.TemplateSyntaxError as e:
        raise SystemExit(_fail(e.filename or path, e.lineno, e.message, entry))
    except jinja2.TemplateError as e:
        where, line = _template_line(e, folder)
        raise SystemExit(_fail(where or path, line, str(e), entry))
    except (ArithmeticError, LookupError, TypeError, ValueError, AttributeError) as e:
        where, line = _template_line(e, folder)
        raise SystemExit(_fail(where or path, line, f"{type(e).__name__}: {e}", entry))
    (Path(out_dir) / f"{entry['node']}.conf").write_text(text)


def _fail(where, line, message, entry):
    at = f" line {line}" if line else ""
    print(f"{where}{at}: {message} (rendering {entry['field']} for {entry['node']})", file=sys.stderr)
    return 2


def main(argv):
    request = json.loads(Path(argv[1]).read_text())
    for entry in request["templates"]:
        render(entry, argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
