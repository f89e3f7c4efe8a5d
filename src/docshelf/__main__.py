from docshelf.cli import main

main()
