"""``python -m memoryd``: the ``memoryd`` console script."""

from memoryd.entry import main

main()
