package org.htod.cli;

import java.io.Console;
import java.lang.reflect.Method;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;
import org.htod.Progress;

/**
 * A progress bar on stderr while long work runs, when stderr and stdout are a terminal (and
 * {@code --quiet} was not given); nothing otherwise, so that scripts and pipes get clean output.
 */
final class Bar implements Progress, AutoCloseable {
    private final String task;
    private final String unit;
    private final boolean show;
    private ProgressBar bar;

    private Bar(String task, String unit, boolean show) {
        this.task = task;
        this.unit = unit;
        this.show = show;
    }

    static Bar of(String task, String unit, boolean quiet) {
        return new Bar(task, unit, !quiet && onTerminal());
    }

    /** Whether this process talks to a terminal: a console, which from Java 22 on must also say it is one. */
    static boolean onTerminal() {
        if (System.getenv("HTOD_PROGRESS") != null) {
            return true; // forced, for a terminal the JVM does not recognise
        }
        Console c = System.console();
        if (c == null) {
            return false;
        }
        try {
            Method isTerminal = Console.class.getMethod("isTerminal");
            return (Boolean) isTerminal.invoke(c);
        } catch (ReflectiveOperationException e) {
            return true; // before Java 22 a console exists only on a terminal
        }
    }

    @Override
    public void step(long done, long total) {
        if (!show) {
            return;
        }
        if (bar == null) {
            bar = new ProgressBarBuilder().setTaskName(task).setUnit(unit.isEmpty() ? "" : " " + unit, 1)
                    .setInitialMax(total).setStyle(ProgressBarStyle.ASCII).setUpdateIntervalMillis(200)
                    .setConsumer(new ConsoleProgressBarConsumer(System.err)).continuousUpdate().build();
        }
        if (total >= 0 && total != bar.getMax()) {
            bar.maxHint(total);
        }
        bar.stepTo(done);
    }

    @Override
    public void close() {
        if (bar != null) {
            bar.close();
        }
    }
}
