// Named in the README.
