"""Line charts as hand-written SVG, for the benchmark reports (scale_report.py, plots.py).

Python 3 standard library only. A chart is a title, a subtitle and panels side by side; a
panel is a box with axes (linear or log), grid lines, series (lines with optional markers,
dashed for reference figures, or single points such as an anchor's figure), vertical
marks (a target) and a legend under it.
"""
import math

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"]
PANEL_W, PANEL_H, PANEL_STEP, TOP = 320, 260, 420, 80


def esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def nice_max(v):
    """The smallest 1, 2, 2.5, 5 x 10^k at or above v (1.0 for v <= 0)."""
    if v <= 0:
        return 1.0
    e = 10 ** math.floor(math.log10(v))
    for m in (1, 2, 2.5, 5, 10):
        if v <= m * e:
            return m * e
    return 10 * e


def num(v):
    """A tick label: 12,000 / 250 / 12.5 / 0.25."""
    if float(v).is_integer():
        return "{:,}".format(int(v))
    if abs(v) >= 100:
        return "{:,.0f}".format(v)
    return ("%.1f" % v if abs(v) >= 10 else "%.2f" % v).rstrip("0").rstrip(".")


def log_ticks(lo, hi):
    """1, 2, 5 x 10^k between lo and hi (both > 0)."""
    out, e = [], math.floor(math.log10(lo))
    while 10 ** e <= hi * 1.0001:
        out += [m * 10 ** e for m in (1, 2, 5) if lo * 0.9999 <= m * 10 ** e <= hi * 1.0001]
        e += 1
    return out


class Series:
    """label; points [(x, y)]; line False draws markers only; dash for reference figures;
    marker "circle", "square" or None; unit names y in the markers' tooltips."""

    def __init__(self, label, points, color=None, line=True, dash=False, marker="circle", unit=""):
        self.label, self.points, self.color = label, sorted(points), color
        self.line, self.dash, self.marker, self.unit = line, dash, marker, unit


class Panel:
    """heading; series; axis labels; xlog/ylog; xticks (default: every x, or 1-2-5 on log);
    ymin/ymax (default 0 / a nice value above the data; log: from the data); vmarks
    [(x, label)] drawn as dashed vertical lines; ytick_fmt formats y ticks."""

    def __init__(self, heading, series, xlabel, ylabel, xlog=False, ylog=False, xticks=None,
                 ymin=None, ymax=None, vmarks=(), ytick_fmt=num):
        self.heading, self.series, self.xlabel, self.ylabel = heading, series, xlabel, ylabel
        self.xlog, self.ylog, self.xticks, self.ymin, self.ymax = xlog, ylog, xticks, ymin, ymax
        self.vmarks, self.ytick_fmt = list(vmarks), ytick_fmt

    def legend_rows(self):
        return len(self.series) + len(self.vmarks)

    def svg(self, box):
        """SVG elements of this panel in box (left, top, width, height)."""
        L, T, pw, ph = box
        xs = [x for s in self.series for x, _ in s.points] + [x for x, _ in self.vmarks]
        ys = [y for s in self.series for _, y in s.points]
        if not xs:
            return ['<text x="%d" y="%d">%s: no data</text>' % (L, T, esc(self.heading))]
        xlo, xhi = min(xs), max(xs)
        if self.xlog:
            a, b = math.log10(xlo), math.log10(xhi)
            pad = 0.1 * max(b - a, 1)
            fx = lambda v, a=a - pad, b=b + pad: (math.log10(v) - a) / (b - a)
            xticks = self.xticks or log_ticks(10 ** (a - pad), 10 ** (b + pad))
        else:
            pad = 0.05 * max(xhi - xlo, 1)
            fx = lambda v, a=xlo - pad, b=xhi + pad: (v - a) / (b - a)
            xticks = self.xticks or sorted(set(xs))
        if self.ylog:
            ys = [y for y in ys if y > 0] or [1.0]
            ylo = self.ymin or 10 ** math.floor(math.log10(min(ys)))
            yhi = self.ymax or 10 ** math.ceil(math.log10(max(ys)))
            fy = lambda v: (math.log10(max(v, ylo)) - math.log10(ylo)) / (math.log10(yhi) - math.log10(ylo))
            yticks = log_ticks(ylo, yhi)
        else:
            ylo = self.ymin if self.ymin is not None else 0.0
            yhi = self.ymax or nice_max(max(ys + [ylo + 1e-9]) * 1.05)
            fy = lambda v: (v - ylo) / (yhi - ylo)
            yticks = [ylo + (yhi - ylo) * k / 5 for k in range(6)]
        X = lambda v: L + fx(v) * pw
        Y = lambda v: T + ph - fy(v) * ph
        out = ['<text x="%d" y="%d" font-weight="bold">%s</text>' % (L, T - 8, esc(self.heading))]
        for v in yticks:
            out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (L, Y(v), L + pw, Y(v)))
            out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (L - 6, Y(v) + 4, esc(self.ytick_fmt(v))))
        for v in xticks:
            if not 0 <= fx(v) <= 1:
                continue
            out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (X(v), T, X(v), T + ph))
            out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (X(v), T + ph + 16, num(v)))
        out.append('<text x="%d" y="%d" text-anchor="middle">%s</text>' % (L + pw // 2, T + ph + 34, esc(self.xlabel)))
        out.append('<text transform="translate(%d,%d) rotate(-90)" text-anchor="middle">%s</text>' %
                   (L - 60, T + ph // 2, esc(self.ylabel)))
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>' % (L, T, pw, ph))
        row = 0
        for i, s in enumerate(self.series):
            color = s.color or COLORS[i % len(COLORS)]
            dash = ' stroke-dasharray="6,4"' if s.dash else ""
            if s.line and len(s.points) > 1:
                out.append('<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>' %
                           (color, dash, " ".join("%.1f,%.1f" % (X(x), Y(y)) for x, y in s.points)))
            for x, y in s.points if s.marker else []:
                tip = "<title>%s at %s: %s %s</title>" % (esc(s.label), num(x), num(y), esc(s.unit))
                if s.marker == "square":
                    out.append('<rect x="%.1f" y="%.1f" width="9" height="9" fill="%s">%s</rect>' %
                               (X(x) - 4.5, Y(y) - 4.5, color, tip))
                else:
                    out.append('<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s">%s</circle>' % (X(x), Y(y), color, tip))
            out += self._legend(L, T + ph + 56 + 18 * row, color, s.label, dash, s.marker if not s.line else None)
            row += 1
        for x, label in self.vmarks:
            out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#555" stroke-dasharray="3,3"/>' %
                       (X(x), T, X(x), T + ph))
            out += self._legend(L, T + ph + 56 + 18 * row, "#555", label, ' stroke-dasharray="3,3"', None)
            row += 1
        return out

    @staticmethod
    def _legend(L, ly, color, label, dash, marker):
        if marker == "square":
            key = '<rect x="%d" y="%d" width="9" height="9" fill="%s"/>' % (L + 5, ly - 4, color)
        elif marker:
            key = '<circle cx="%d" cy="%d" r="3.5" fill="%s"/>' % (L + 10, ly, color)
        else:
            key = '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>' % (
                L, ly, L + 20, ly, color, dash)
        return [key, '<text x="%d" y="%d">%s</text>' % (L + 26, ly + 4, esc(label))]


def write(path, title, subtitle, panels, panel_w=PANEL_W):
    """Writes the chart: panels side by side (each panel_w wide) under the title and subtitle."""
    step = panel_w + PANEL_STEP - PANEL_W
    W = max(step * max(len(panels), 1), 760)
    H = TOP + PANEL_H + 60 + 18 * max([p.legend_rows() for p in panels] + [0])
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
           'font-family="sans-serif" font-size="12">' % (W, H, W, H),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="20" y="24" font-size="15" font-weight="bold">%s</text>' % esc(title),
           '<text x="20" y="44" fill="#555">%s</text>' % esc(subtitle)]
    for i, p in enumerate(panels):
        out += p.svg((step * i + 80, TOP, panel_w, PANEL_H))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
