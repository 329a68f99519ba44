"""A plugin that ends the process when imported: flopcheck must still say so in one line, exit 2."""

import sys

sys.exit(0)
