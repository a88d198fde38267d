"""Draws fleet-sim's CSV: reconnect attempts and emit-acks resent per second around the backend's
return. Usage: python3 plot.py CSV PNG [TITLE]"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the non-interactive backend)


def read(path):
    """The CSV's columns as lists of ints, keyed by header."""
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    return {key: [int(row[key]) for row in rows] for key in rows[0]}


def peak_to_mean(values, seconds, start):
    """Peak over mean per second over `seconds` seconds from index `start`."""
    window = values[start:start + seconds] + [0] * max(0, start + seconds - len(values))
    mean = sum(window) / seconds
    return max(window) / mean if mean else 0.0


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    columns = read(sys.argv[1])
    second = columns["second"]
    start = second.index(0)
    shown = [index for index, value in enumerate(second) if value <= 75]
    x = [second[index] for index in shown]

    figure, (top, bottom) = plt.subplots(2, 1, figsize=(8, 5.6), sharex=True, dpi=100)
    attempts = columns["attempts"]
    connections = columns["connections"]
    outage_rate = sum(attempts[:start]) / start if start else 0
    top.step(x, [attempts[i] for i in shown], where="post", color="tab:blue", label="connection attempts/s")
    top.step(x, [connections[i] for i in shown], where="post", color="tab:green", linestyle="--",
             label="connections established/s")
    if any(columns["rejected"]):
        top.step(x, [columns["rejected"][i] for i in shown], where="post", color="tab:red",
                 label="refused over the accept limit/s")
    top.axhline(outage_rate, color="grey", linewidth=0.8, linestyle=":", label="mean attempts/s during the outage")
    total = sum(connections[start:])
    reached, back = 0, None
    for index in range(start, len(connections)):
        reached += connections[index]
        if back is None and reached >= 0.99 * total:
            back = second[index] + 1
    if back is not None:
        top.axvline(back, color="tab:green", linewidth=0.8, linestyle=":")
        top.text(back + 0.5, max(attempts) * 0.55, f"99 % back\nby {back} s", color="tab:green", fontsize=8)
    top.set_ylabel("per second")
    top.set_ylim(0, max(attempts[i] for i in shown) * 1.45)
    top.set_title(f"Reconnections: peak-to-mean {peak_to_mean(attempts, 60, start):.2f} over the first minute, "
                  f"{peak_to_mean(attempts, 30, start):.2f} over the first 30 s", fontsize=10)
    top.legend(loc="upper right", fontsize=8, frameon=False)

    acks = columns["acks_sent"]
    bottom.step(x, [acks[i] for i in shown], where="post", color="tab:purple", label="emit-acks resent/s")
    bottom.set_ylabel("per second")
    bottom.set_ylim(0, max(max(acks), 1) * 1.3)
    bottom.set_title(f"Tracking acks resent: max {max(acks)}/s, total {sum(acks)}, "
                     f"peak-to-mean {peak_to_mean(acks, 60, start):.2f} over the first minute", fontsize=10)
    bottom.set_xlabel("seconds since the backend came back")
    bottom.legend(loc="upper right", fontsize=8, frameon=False)
    for axis in (top, bottom):
        axis.axvspan(x[0], 0, color="0.92", zorder=0)
        axis.grid(axis="y", color="0.85", linewidth=0.6)
        axis.set_xlim(x[0], x[-1])
    top.text(x[0] / 2, top.get_ylim()[1] * 0.4, "backend away", ha="center", fontsize=9, color="0.4")
    if len(sys.argv) == 4:
        figure.suptitle(sys.argv[3], fontsize=11)
    figure.tight_layout()
    figure.savefig(sys.argv[2])


if __name__ == "__main__":
    main()
