package ml.juno.engine.model;

/** The sizes of a decoder: layers, embedding width, FFN width, vocabulary, trained context length. */
public record ModelDims(int layers, int embedding, int ffn, int vocab, int contextLength) {
    public ModelDims {
        if (layers <= 0 || embedding <= 0 || ffn <= 0 || vocab <= 0 || contextLength <= 0) {
            throw new IllegalArgumentException("bad model dimensions: layers " + layers + ", embedding " + embedding
                    + ", ffn " + ffn + ", vocab " + vocab + ", context " + contextLength);
        }
    }
}
