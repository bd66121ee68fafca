package org.htod.infinispan.cluster;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link ClusterNodeMain} in a child JVM: sends it commands, waits for its answers, counts the
 * puts it acknowledged, and keeps everything it printed in a log file beside its data.
 */
final class NodeProcess implements AutoCloseable {
    private final String name;
    private final Process process;
    private final PrintWriter commands;
    private final BlockingQueue<String> answers = new LinkedBlockingQueue<>();
    /** Highest key whose put returned on this node, -1 if none. */
    private final AtomicInteger lastAck = new AtomicInteger(-1);
    private final AtomicInteger acks = new AtomicInteger();
    private final Thread reader;

    private NodeProcess(String name, Process process, Path log) throws IOException {
        this.name = name;
        this.process = process;
        this.commands = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
        Writer logWriter = Files.newBufferedWriter(log, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        this.reader = new Thread(() -> pump(logWriter), "output of " + name);
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts node {@code name} with its data in {@code dir}, listening on {@code ports.get(index)}. */
    static NodeProcess start(String name, Path dir, int index, List<Integer> ports) throws IOException {
        Files.createDirectories(dir);
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.net.preferIPv4Stack=true",
                "-cp", System.getProperty("java.class.path"), ClusterNodeMain.class.getName(),
                name, dir.toString(), Integer.toString(ports.get(index))));
        ports.forEach(p -> cmd.add(Integer.toString(p)));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        return new NodeProcess(name, p, dir.resolveSibling(name + ".log"));
    }

    private void pump(Writer log) {
        try (log; BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                log.write(line);
                log.write('\n');
                if (line.startsWith("ACK ")) {
                    lastAck.set(Integer.parseInt(line.substring(4).trim()));
                    acks.incrementAndGet();
                } else {
                    answers.add(line);
                }
            }
        } catch (IOException e) {
            answers.add("EOF " + e);
        }
        answers.add("EOF");
    }

    void send(String command) {
        commands.println(command);
    }

    /** The next line starting with {@code prefix}, skipping log lines; fails after {@code timeout}. */
    String expect(String prefix, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            String line = answers.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null) {
                throw new AssertionError(name + " did not answer " + prefix + " within " + timeout);
            }
            if (line.startsWith(prefix)) {
                return line;
            }
            if (line.startsWith("EOF")) {
                throw new AssertionError(name + " ended (exit " + exitCode() + ") before answering " + prefix);
            }
        }
    }

    /** Sends {@code command} and returns the answer starting with {@code prefix}. */
    String ask(String command, String prefix, Duration timeout) throws InterruptedException {
        send(command);
        return expect(prefix, timeout);
    }

    int lastAck() {
        return lastAck.get();
    }

    int acks() {
        return acks.get();
    }

    private String exitCode() {
        return process.isAlive() ? "none yet" : Integer.toString(process.exitValue());
    }

    /** SIGKILL: the JVM gets no chance to close its store. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new AssertionError(name + " still runs 30 s after SIGKILL");
        }
        reader.join(10_000);
    }

    /**
     * Kills the node if it still runs. Interrupted while waiting for it to end, it leaves the
     * SIGKILL to finish on its own and keeps the interrupt: a close that threw {@code
     * InterruptedException} would make every try-with-resources of a node handle one.
     */
    @Override
    public void close() {
        if (process.isAlive()) {
            try {
                kill();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
