package org.htod.bench.report;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.openjdk.jmh.util.ListStatistics;

/**
 * The drained rate of a throughput write run, read from its JMH JSON: the secondary scores of
 * {@code DrainedCounters} ({@code drainedOps}, {@code drainedMs}: each iteration a pass from the
 * store drained to the store drained again, the drain included). The score is the passes'
 * operations over their time, {@code drainedOps / drainedMs}, in the unit of the run's primary
 * score ({@code ops/s}); the error is JMH's 99.9% error of the mean of the iterations' rates, each
 * iteration's {@code drainedOps / drainedMs} from the {@code rawData}.
 */
record DrainedScore(double score, double error, double drainShare) {

    /** The drained rate of {@code run}, or empty when the run has no drain figures (a read, or a run made before). */
    static Optional<DrainedScore> of(JsonNode run) {
        JsonNode secondary = run.get("secondaryMetrics");
        JsonNode ops = secondary == null ? null : secondary.get("drainedOps");
        JsonNode ms = secondary == null ? null : secondary.get("drainedMs");
        if (ops == null || ms == null) {
            return Optional.empty();
        }
        double perMs = perMillisecond(run.get("primaryMetric").get("scoreUnit").asText());
        double totalMs = ms.get("score").asDouble();
        if (Double.isNaN(perMs) || totalMs <= 0) {
            return Optional.empty();
        }
        List<Double> rates = new ArrayList<>();
        JsonNode opsRaw = ops.get("rawData");
        JsonNode msRaw = ms.get("rawData");
        if (opsRaw != null && msRaw != null) {
            for (int fork = 0; fork < opsRaw.size() && fork < msRaw.size(); fork++) {
                for (int i = 0; i < opsRaw.get(fork).size() && i < msRaw.get(fork).size(); i++) {
                    double t = msRaw.get(fork).get(i).asDouble();
                    if (t > 0) {
                        rates.add(opsRaw.get(fork).get(i).asDouble() / t * perMs);
                    }
                }
            }
        }
        double error = Double.NaN;
        if (rates.size() > 1) {
            ListStatistics s = new ListStatistics();
            rates.forEach(s::addValue);
            error = s.getMeanErrorAt(0.999);
        }
        JsonNode drain = secondary.get("drainMs");
        double share = drain == null ? Double.NaN : drain.get("score").asDouble() / totalMs;
        return Optional.of(new DrainedScore(ops.get("score").asDouble() / totalMs * perMs, error, share));
    }

    /** Milliseconds in the time unit of a throughput unit ({@code ops/s}: 1,000), or NaN for another kind of unit. */
    static double perMillisecond(String unit) {
        return switch (unit) {
            case "ops/ns" -> 1e-6;
            case "ops/us" -> 1e-3;
            case "ops/ms" -> 1;
            case "ops/s" -> 1e3;
            case "ops/min" -> 60e3;
            case "ops/hr" -> 3600e3;
            default -> Double.NaN;
        };
    }
}
