fn main() {
    println!("perceptron: under construction");
}
