from sessionsift.cli import main

main()
