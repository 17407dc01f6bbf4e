package ml.juno.engine.model;

/**
 * One llama-bench style measurement: test name ({@code pp128}, {@code tg64}), tokens per repetition, tokens/s mean
 * and sample standard deviation over the repetitions, and the weight bytes read per second (decode only; 0 for pp).
 */
public record BenchResult(String test, int tokens, int reps, double tokensPerSecond, double stddev, double gbPerSecond) {}
