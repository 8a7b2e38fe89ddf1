import sys

from gan_sru.commands.main import main

sys.exit(main())
