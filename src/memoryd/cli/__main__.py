from memoryd.cli import main

main()
