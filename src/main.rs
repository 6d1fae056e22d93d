fn main() {
    std::process::exit(polytune::cli::main());
}
