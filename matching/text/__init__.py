"""Text in: tokens, data files, word vectors, typed input, examples and padded batches."""
