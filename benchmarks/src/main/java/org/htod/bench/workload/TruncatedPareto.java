package org.htod.bench.workload;

import java.util.SplittableRandom;

/**
 * Object sizes from a truncated Pareto distribution, drawn by the inverse method exactly as the
 * core paper's §3.3 describes: {@code F^-1(u) = k (1 - u (1 - (k/C)^alpha))^(-1/alpha)}, rounded to
 * the nearest integer, with {@code k} the smallest size and {@code C} the cutoff.
 */
public final class TruncatedPareto {
    private final double alpha;
    private final double k;
    private final double c;
    private final double tailMass;

    public TruncatedPareto(double alpha, double k, double cutoff) {
        if (alpha <= 0 || k <= 0 || cutoff <= k) {
            throw new IllegalArgumentException("need alpha > 0 and 0 < k < cutoff, got " + alpha + ", " + k + ", " + cutoff);
        }
        this.alpha = alpha;
        this.k = k;
        this.c = cutoff;
        this.tailMass = 1 - Math.pow(k / cutoff, alpha);
    }

    public int next(SplittableRandom r) {
        double u = r.nextDouble();
        return (int) Math.round(k * Math.pow(1 - u * tailMass, -1 / alpha));
    }

    /** The distribution's mean, for checking a corpus against its target. */
    public double mean() {
        if (Math.abs(alpha - 1) < 1e-12) {
            return k * Math.log(c / k) / tailMass;
        }
        return alpha * Math.pow(k, alpha) / (1 - alpha) * (Math.pow(c, 1 - alpha) - Math.pow(k, 1 - alpha)) / tailMass;
    }

    public double alpha() {
        return alpha;
    }

    public double cutoff() {
        return c;
    }
}
