// Not named in the README: the check must fail on it.
