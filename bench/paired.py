"""Paired comparison of two tools' runs taken side by side.

The benches alternate their runs, so round i of one tool ran next to
round i of the other, in the same state of the machine. The machine's
state moves figures by more than the difference asked about (1-2%
between rounds pinned, 2x unpinned), so a ratio of medians can say
"0.99" where the tools are level, or level where one is ahead. Round by
round ratios cancel the machine's drift; the median of those and a
distribution-free interval for it (order statistics of the ratios,
coverage from the binomial distribution: no assumption about their
shape) say whether a difference is there at all.

Figures are lines "name value round"; a run that gave no figure is not
there and its round pairs with nothing.

    python3 bench/paired.py FIGURES A B [A B ...]

prints the paired ratio A/B for each pair of names.
"""
import math
import statistics
import sys


# Below this chance of holding the median an interval tells nothing
# (five rounds give 93.8%, three 75%).
TELLS = 0.9


def read_rounds(path):
    """name -> {round: value}, from lines "name value round"."""
    runs = {}
    for line in open(path):
        f = line.split()
        if len(f) == 3:
            runs.setdefault(f[0], {})[f[2]] = float(f[1])
    return runs


def coverage(n, k):
    """P(x(k) <= m <= x(n+1-k)) for n draws of any continuous
    distribution whose median is m: 1 - 2 P(Binomial(n, 1/2) < k)."""
    return 1 - 2 * sum(math.comb(n, i) for i in range(k)) / 2 ** n


def median_interval(xs, level=0.95):
    """(median, low, high, coverage): the narrowest pair of order
    statistics x(k), x(n+1-k) that holds the median with probability at
    least `level`, or min and max (with their lower coverage) when n is
    too small for it."""
    xs = sorted(xs)
    n = len(xs)
    k = 1
    while k + 1 <= (n + 1) // 2 and coverage(n, k + 1) >= level:
        k += 1
    return statistics.median(xs), xs[k - 1], xs[n - k], coverage(n, k)


def verdict(low, high, target=1.0):
    """Where the interval lies against target."""
    if low > target:
        return "ahead"
    if high < target:
        return "behind"
    return "level"


def ratios(runs, a, b, combine=lambda x, y: x / y):
    """combine(a, b) for every round that has both."""
    ra, rb = runs.get(a, {}), runs.get(b, {})
    return [combine(ra[r], rb[r]) for r in ra if r in rb and rb[r]]


def line(runs, a, b, combine=lambda x, y: x / y, target=1.0, fmt="5.3f",
         words=("ahead", "level", "behind")):
    """One line: the paired statistic of a against b, or None."""
    xs = ratios(runs, a, b, combine)
    if len(xs) < 2:
        return None
    m, lo, hi, cov = median_interval(xs)
    v = verdict(lo, hi, target)
    v = dict(zip(("ahead", "level", "behind"), words))[v]
    if cov < TELLS:
        v = "too few rounds to tell"
    return (f"{m:{fmt}} [{lo:{fmt}}..{hi:{fmt}}] "
            f"({cov:.1%}, {len(xs)} rounds)" + (f" {v}" if v else ""))


def main(argv):
    if len(argv) < 4 or len(argv) % 2:
        sys.exit("usage: paired.py FIGURES A B [A B ...]")
    runs = read_rounds(argv[1])
    for a, b in zip(argv[2::2], argv[3::2]):
        print(f"{a} / {b} = {line(runs, a, b) or 'too few rounds'}")


if __name__ == "__main__":
    main(sys.argv)
