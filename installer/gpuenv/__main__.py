from gpuenv._entry import main

main()
