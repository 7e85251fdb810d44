"""Small statistics helpers."""


def mean(values):
    """The arithmetic mean of a non-empty list."""
    return sum(values) / len(values)


def median(values):
    """The middle value of a non-empty list (the mean of the two middle values for an even length)."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle]
