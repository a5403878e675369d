# Paddock's startup snippet for Python contexts. It runs once, silently,
# right after the kernel answers, in a private namespace. It imports nothing
# heavy: formatters are registered by type *name*, so pandas and matplotlib
# load only when a cell uses them, and `1+1` costs what it costs without it.
import sys as _sys
import types as _types


def _install():
    import json
    import math
    import os

    ip = get_ipython()  # noqa: F821 (IPython's builtin)
    mod = _types.ModuleType("_paddock")
    _sys.modules["_paddock"] = mod

    # --- per-cell environment ------------------------------------------
    saved = {}

    def setenv(env):
        saved.clear()
        for k, v in env.items():
            saved[k] = os.environ.get(k)
            os.environ[k] = v

    def restoreenv():
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        saved.clear()

    mod.setenv, mod.restoreenv = setenv, restoreenv

    # --- soft output cap -----------------------------------------------
    # The guest enforces the real cap; this one spares the kernel from
    # sending a gigabyte it would drop anyway.
    cap = int(os.environ.get("PADDOCK_OUTPUT_CAP", "0") or 0)
    if cap > 0:
        state = {"n": 0}

        def reset(*a, **k):
            state["n"] = 0

        ip.events.register("pre_run_cell", reset)
        for stream in (_sys.stdout, _sys.stderr):
            orig = stream.write

            def write(s, _orig=orig):
                n = len(s)
                if state["n"] > cap:
                    return n
                state["n"] += n
                if state["n"] > cap:
                    keep = n - (state["n"] - cap)
                    _orig(s[: max(keep, 0)])
                    # one byte over the cap tells the guest output was cut
                    _orig(" ")
                    return n
                return _orig(s)

            try:
                stream.write = write
            except Exception:
                pass

    # --- output of child processes ---------------------------------------
    # ipykernel reads what subprocesses write to fds 1 and 2 in a thread
    # that dies on the first byte that is not UTF-8 (strict decode) and may
    # not have read a finished command's output before the cell's reply. A
    # thread of ours takes over: it decodes with replacement, and a
    # post_execute hook waits (briefly) until the pipes are drained.
    _take_over_fd_capture(ip)

    # --- structured data of DataFrames ----------------------------------
    from IPython.core.formatters import BaseFormatter
    from traitlets import ObjectName, Unicode

    def clean(v):
        if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
            return None
        if hasattr(v, "isoformat"):
            try:
                return v.isoformat()
            except Exception:
                return str(v)
        if isinstance(v, (str, int, float, bool)) or v is None:
            return v
        if hasattr(v, "item"):
            try:
                return clean(v.item())
            except Exception:
                pass
        return str(v)

    MAX_CELLS = 200000

    def frame_data(df):
        if df.shape[0] * max(df.shape[1], 1) > MAX_CELLS:
            return None
        out = {}
        for col in df.columns:
            out[str(col)] = [clean(v) for v in df[col].tolist()]
        return out

    class DataFormatter(BaseFormatter):
        format_type = Unicode("application/vnd.paddock.data+json")
        print_method = ObjectName("_repr_paddock_data_")
        _return_type = (dict,)

    class ChartFormatter(BaseFormatter):
        format_type = Unicode("application/vnd.paddock.chart+json")
        print_method = ObjectName("_repr_paddock_chart_")
        _return_type = (dict,)

        # matplotlib's inline backend removes every printer of Figure from
        # every formatter when pyplot is imported, so figures are
        # recognised here, by class name, instead of registered.
        def __call__(self, obj):
            for k in type(obj).__mro__:
                if k.__name__ == "Figure" and k.__module__ == "matplotlib.figure":
                    return _chart_of(obj, clean)
            return super().__call__(obj)

    df_fmt = DataFormatter(parent=ip.display_formatter)
    df_fmt.for_type_by_name("pandas.core.frame", "DataFrame", frame_data)
    ip.display_formatter.formatters[df_fmt.format_type] = df_fmt

    ch_fmt = ChartFormatter(parent=ip.display_formatter)
    ip.display_formatter.formatters[ch_fmt.format_type] = ch_fmt

    # Plain lists and dicts also get application/json (as E2B's server
    # does), when they are JSON and not huge.
    js = ip.display_formatter.formatters.get("application/json")
    if js is not None:

        def as_json(obj):
            try:
                s = json.dumps(obj, default=str, allow_nan=False)
            except (TypeError, ValueError):
                return None
            if len(s) > 1 << 20:
                return None
            return json.loads(s)

        js.for_type(dict, as_json)
        js.for_type(list, as_json)


def _take_over_fd_capture(ip):
    import codecs
    import fcntl
    import os
    import select
    import struct
    import termios
    import threading
    import time

    watched = []
    for fno, stream in ((1, _sys.stdout), (2, _sys.stderr)):
        fid = getattr(stream, "_fid", None)
        old = getattr(stream, "watch_fd_thread", None)
        if fid is None or old is None or not getattr(stream, "_should_watch", False):
            continue
        # Stop the old thread: it checks the flag after its next read,
        # which this byte (dropped by it) provides.
        stream._should_watch = False
        os.write(fno, b"\0")
        old.join(2)
        if old.is_alive():
            stream._should_watch = True
            continue
        state = {"busy": False}

        # The thread waits for the pipe to be readable and marks itself busy
        # *before* it takes bytes out: at any moment, output in flight is
        # either in the pipe (FIONREAD > 0) or held by a busy thread, so the
        # drain below can tell "nothing left" at a glance, without sleeping.
        def loop(stream=stream, fid=fid, state=state):
            dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
            poller = select.poll()
            poller.register(fid, select.POLLIN)
            while True:
                try:
                    poller.poll()
                except OSError:
                    return
                state["busy"] = True
                try:
                    try:
                        b = os.read(fid, 65536)
                    except OSError:
                        return
                    if not b:
                        return
                    stream.write(dec.decode(b))
                except Exception:
                    pass
                finally:
                    state["busy"] = False

        threading.Thread(target=loop, daemon=True, name="paddock-fd%d" % fno).start()
        watched.append((stream, fid, state))

    def pending(fid):
        return struct.unpack("i", fcntl.ioctl(fid, termios.FIONREAD, b"\0\0\0\0"))[0]

    # Waits (at most 0.5 s) until the pipes are empty and no thread holds
    # bytes; a cell whose children wrote nothing costs two ioctls.
    def drain():
        deadline = time.monotonic() + 0.5
        for stream, fid, state in watched:
            while (pending(fid) > 0 or state["busy"]) and time.monotonic() < deadline:
                time.sleep(0.0005)
            stream.flush()

    if watched:
        ip.events.register("post_execute", drain)


# --- matplotlib chart data, in the shape of E2B's chart results ---------
def _chart_of(fig, clean):
    try:
        axes = fig.get_axes()
        if not axes:
            return None
        if len(axes) == 1:
            return _axes_chart(axes[0], clean)
        title = None
        if getattr(fig, "_suptitle", None) is not None:
            title = fig._suptitle.get_text() or None
        return {"type": "superchart", "title": title, "elements": [_axes_chart(a, clean) for a in axes]}
    except Exception:
        return None


def _unit(label):
    import re

    if not label:
        return None
    m = re.search(r"\s\((.*?)\)|\[(.*?)\]", label)
    if m:
        return m.group(1) or m.group(2)
    return None


def _is_grid(line):
    xd, yd = line.get_xdata(), line.get_ydata()
    try:
        return len(xd) == 2 and len(yd) == 2 and (xd[0] == xd[1] or yd[0] == yd[1]) and line.get_label().startswith("_")
    except Exception:
        return False


def _rect_of_line(line):
    """(x0, x1, y0, y1) when line is a closed axis-aligned rectangle."""
    try:
        xd, yd = [float(v) for v in line.get_xdata()], [float(v) for v in line.get_ydata()]
    except Exception:
        return None
    if len(xd) != 5 or len(yd) != 5 or xd[0] != xd[4] or yd[0] != yd[4]:
        return None
    xs, ys = sorted(set(xd)), sorted(set(yd))
    if len(xs) != 2 or len(ys) != 2:
        return None
    return xs[0], xs[1], ys[0], ys[1]


def _kind(ax):
    from matplotlib.collections import PathCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import PathPatch, Rectangle, Wedge
    from matplotlib.text import Text

    objs = [o for o in getattr(ax, "_children", ax.get_children()) if not isinstance(o, Text)]
    if not objs:
        return "unknown"
    if all(isinstance(o, Line2D) for o in objs):
        # boxplot() without patch_artist draws each box as a closed line
        return "box_and_whisker" if any(_rect_of_line(o) for o in objs) else "line"
    if all(isinstance(o, (PathPatch, Line2D)) for o in objs) and any(isinstance(o, PathPatch) for o in objs):
        return "box_and_whisker"
    objs = [o for o in objs if not (isinstance(o, Line2D) and _is_grid(o))]
    if objs and all(isinstance(o, PathCollection) for o in objs):
        return "scatter"
    if objs and all(isinstance(o, Wedge) for o in objs):
        return "pie"
    if objs and all(isinstance(o, Rectangle) for o in objs):
        return "bar"
    return "unknown"


def _base(ax, kind):
    t = ax.get_title() or None
    return {"type": kind, "title": t, "elements": []}


def _two_d(ax, kind):
    c = _base(ax, kind)
    xl, yl = ax.get_xlabel() or None, ax.get_ylabel() or None
    c.update({"x_label": xl, "y_label": yl, "x_unit": _unit(xl), "y_unit": _unit(yl)})
    return c


def _ticks(ax, which, clean):
    import matplotlib.dates as mdates

    axis = ax.xaxis if which == "x" else ax.yaxis
    ticks = list(ax.get_xticks() if which == "x" else ax.get_yticks())
    labels = [t.get_text() for t in (ax.get_xticklabels() if which == "x" else ax.get_yticklabels())]
    scale = ax.get_xscale() if which == "x" else ax.get_yscale()
    conv = getattr(axis, "converter", None)
    is_date = conv is not None and "date" in type(conv).__name__.lower()
    if is_date:
        ticks = [mdates.num2date(t).isoformat() for t in ticks]
        scale = "datetime"
    else:
        ticks = [float(t) for t in ticks]
        if scale == "linear" and ticks and labels and all(
            t == i and lab != str(i) for i, (t, lab) in enumerate(zip(ticks, labels))
        ):
            scale = "categorical"
    return ticks, labels, scale


def _point(ax, kind, clean):
    c = _two_d(ax, kind)
    for w in ("x", "y"):
        t, lab, sc = _ticks(ax, w, clean)
        c[w + "_ticks"], c[w + "_tick_labels"], c[w + "_scale"] = t, lab, sc
    return c


def _axes_chart(ax, clean):
    kind = _kind(ax)
    if kind == "line":
        c = _point(ax, kind, clean)
        for line in ax.get_lines():
            if _is_grid(line):
                continue
            label = line.get_label()
            if label.startswith("_child"):
                label = "Line " + label[6:]
            pts = [[clean(x), clean(y)] for x, y in zip(line.get_xdata(), line.get_ydata())]
            c["elements"].append({"label": label, "points": pts})
        return c
    if kind == "scatter":
        c = _point(ax, kind, clean)
        for coll in ax.collections:
            pts = [[clean(x), clean(y)] for x, y in coll.get_offsets()]
            c["elements"].append({"label": coll.get_label(), "points": pts})
        return c
    if kind == "bar":
        c = _two_d(ax, kind)
        for cont in ax.containers:
            group = cont.get_label()
            if group.startswith("_container"):
                group = "Group " + group[10:]
            rects = list(cont)
            heights = [r.get_height() for r in rects]
            if heights and all(h == heights[0] for h in heights) and len(heights) > 1:
                # horizontal bars: the values are the widths
                c["x_label"], c["y_label"] = c["y_label"], c["x_label"]
                c["x_unit"], c["y_unit"] = c["y_unit"], c["x_unit"]
                labels = [t.get_text() for t in ax.get_yticklabels()]
                values = [r.get_width() for r in rects]
            else:
                labels = [t.get_text() for t in ax.get_xticklabels()]
                values = heights
            for lab, v in zip(labels, values):
                c["elements"].append({"label": lab, "group": group, "value": clean(v)})
        return c
    if kind == "pie":
        c = _base(ax, kind)
        for w in ax.patches:
            c["elements"].append(
                {"label": w.get_label(), "angle": abs(round(w.theta2 - w.theta1, 4)), "radius": clean(w.r)}
            )
        return c
    if kind == "box_and_whisker":
        return _boxes(ax, clean)
    c = _base(ax, "unknown")
    return c


def _boxes(ax, clean):
    c = _two_d(ax, "box_and_whisker")
    boxes = []
    for p in ax.patches:
        v = p.get_path().vertices
        xs, ys = v[:, 0], v[:, 1]
        boxes.append({"x0": float(xs.min()), "x1": float(xs.max()), "y0": float(ys.min()), "y1": float(ys.max()), "label": p.get_label()})
    box_lines = set()
    for line in ax.lines:
        r = _rect_of_line(line)
        if r:
            box_lines.add(id(line))
            boxes.append({"x0": r[0], "x1": r[1], "y0": r[2], "y1": r[3], "label": line.get_label()})
    if not boxes:
        return c
    vertical = all(round(b["x1"] - b["x0"], 4) == round(boxes[0]["x1"] - boxes[0]["x0"], 4) for b in boxes)
    boxes.sort(key=lambda b: b["x0"] if vertical else b["y0"])
    labels = [t.get_text() for t in (ax.get_xticklabels() if vertical else ax.get_yticklabels())]
    for i, b in enumerate(boxes):
        lo, hi = (b["y0"], b["y1"]) if vertical else (b["x0"], b["x1"])
        a0, a1 = (b["x0"], b["x1"]) if vertical else (b["y0"], b["y1"])
        med, wmin, wmax, outliers = None, lo, hi, []
        for line in ax.lines:
            if id(line) in box_lines:
                continue
            xd, yd = list(line.get_xdata()), list(line.get_ydata())
            pos, val = (xd, yd) if vertical else (yd, xd)
            if not pos or not all(a0 - 1e-9 <= p <= a1 + 1e-9 for p in pos):
                continue
            if line.get_linestyle() in ("None", "none", "") and line.get_marker() not in (None, "None", ""):
                outliers.extend(float(v) for v in val)
            elif len(val) == 2 and val[0] == val[1] and lo <= val[0] <= hi:
                med = float(val[0])
            elif len(val) == 2:
                if max(val) <= lo + 1e-9:
                    wmin = float(min(val))
                elif min(val) >= hi - 1e-9:
                    wmax = float(max(val))
        label = labels[i] if i < len(labels) and labels[i] else (b["label"] if not b["label"].startswith("_") else str(i + 1))
        c["elements"].append(
            {
                "label": label,
                "min": wmin,
                "first_quartile": lo,
                "median": med,
                "third_quartile": hi,
                "max": wmax,
                "outliers": outliers,
            }
        )
    if not vertical:
        c["x_label"], c["y_label"] = c["y_label"], c["x_label"]
        c["x_unit"], c["y_unit"] = c["y_unit"], c["x_unit"]
    return c


_install()
del _install
