"""Accident: the function has another name."""


def vec_add(x, y):
    return x
