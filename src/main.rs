//! The `perceptron` command: a thin shell around the library's CLI module.

fn main() {
    std::process::exit(perceptron::cli::main());
}
