package org.htod.cli;

import java.io.FilterWriter;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;

/**
 * Where the tool writes its results and errors: UTF-8 whatever the platform's charset, since a
 * writer in the default charset (US-ASCII on JDK 17 under {@code LC_ALL=C}) turns every other
 * character into {@code ?}, and a dump of the store's keys would be a corrupt backup. A failed
 * write is kept with its cause: a {@code PrintWriter} swallows it and keeps only a flag.
 */
final class Output extends PrintWriter {
    private final Keeper keeper;

    private Output(Keeper keeper, boolean autoFlush) {
        super(keeper, autoFlush);
        this.keeper = keeper;
    }

    /**
     * UTF-8 onto {@code stream}: for the tool, the file descriptor itself rather than {@code
     * System.out}, a {@code PrintStream} that keeps a failed write's cause to itself too.
     */
    static Output of(OutputStream stream, boolean autoFlush) {
        return new Output(new Keeper(new OutputStreamWriter(stream, StandardCharsets.UTF_8)), autoFlush);
    }

    /** Throws if a write to {@code out}, named {@code what} in the message, has failed. */
    static void check(PrintWriter out, String what) throws IOException {
        if (out.checkError()) { // flushes first, so that what is buffered fails here, not later
            IOException cause = out instanceof Output o ? o.keeper.failure : null;
            throw new IOException("cannot write " + what + (cause == null ? "" : ": " + cause.getMessage()), cause);
        }
    }

    /** Passes everything on, keeping the first failure. */
    private static final class Keeper extends FilterWriter {
        private IOException failure;

        Keeper(Writer out) {
            super(out);
        }

        private IOException kept(IOException e) {
            if (failure == null) {
                failure = e;
            }
            return e;
        }

        @Override
        public void write(int c) throws IOException {
            try {
                super.write(c);
            } catch (IOException e) {
                throw kept(e);
            }
        }

        @Override
        public void write(char[] cbuf, int off, int len) throws IOException {
            try {
                super.write(cbuf, off, len);
            } catch (IOException e) {
                throw kept(e);
            }
        }

        @Override
        public void write(String str, int off, int len) throws IOException {
            try {
                super.write(str, off, len);
            } catch (IOException e) {
                throw kept(e);
            }
        }

        @Override
        public void flush() throws IOException {
            try {
                super.flush();
            } catch (IOException e) {
                throw kept(e);
            }
        }

        @Override
        public void close() throws IOException {
            try {
                super.close();
            } catch (IOException e) {
                throw kept(e);
            }
        }
    }
}
