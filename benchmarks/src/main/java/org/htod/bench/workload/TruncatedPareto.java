package org.htod.bench.workload;

import java.util.SplittableRandom;

/**
 * Object sizes from a truncated Pareto distribution, generated exactly as §3.3 of the paper
 * describes ("Techniques for efficiently allocating persistent storage").
 *
 * <p>The Pareto distribution has CDF {@code F(x) = 1 - (k/x)^α} for {@code x ≥ k}; truncating it at
 * a cutoff {@code C} (the largest object) gives the PDF {@code f(x) = α k^α / (1 - (k/C)^α) ·
 * x^(-α-1)} on {@code [k, C]}. Sizes come by the inverse method: for a uniform {@code r} in (0, 1]
 * the size is the integer nearest to
 *
 * <pre>
 *   F⁻¹(r) = k · (1 − r · (1 − (k/C)^α))^(−1/α)
 * </pre>
 *
 * so {@code r → 0} gives {@code k} and {@code r = 1} gives {@code C}. {@code α} says how heavy the
 * tail is (below 2 the untruncated variance is infinite, below 1 the mean too), {@code k} is the
 * scale (the smallest object; the paper takes its 512-byte grain) and {@code C} the cutoff.
 *
 * @param alpha the shape α, positive
 * @param minimum the scale k in bytes, at least 1
 * @param maximum the cutoff C in bytes, above {@code minimum}
 */
public record TruncatedPareto(double alpha, double minimum, double maximum) {

    public TruncatedPareto {
        if (!(alpha > 0) || !(minimum >= 1) || !(maximum > minimum) || Double.isInfinite(maximum)) {
            throw new IllegalArgumentException("truncated Pareto needs α > 0 and 1 ≤ k < C < ∞, got α="
                    + alpha + " k=" + minimum + " C=" + maximum);
        }
    }

    /** One size in bytes, drawn with {@code random}. */
    public int sample(SplittableRandom random) {
        double r = 1.0 - random.nextDouble(); // (0, 1]
        return sizeAt(r);
    }

    /** The inverse CDF at {@code r} in (0, 1], rounded to the nearest integer. */
    public int sizeAt(double r) {
        double tail = 1.0 - Math.pow(minimum / maximum, alpha);
        double x = minimum * Math.pow(1.0 - r * tail, -1.0 / alpha);
        return (int) Math.min(Math.round(x), Math.round(maximum));
    }

    /** The mean of the (continuous) distribution in bytes. */
    public double mean() {
        return mean(alpha, minimum, maximum);
    }

    static double mean(double alpha, double k, double c) {
        double norm = 1.0 - Math.pow(k / c, alpha);
        if (Math.abs(alpha - 1.0) < 1e-12) {
            return k * Math.log(c / k) / norm;
        }
        return alpha * Math.pow(k, alpha) / norm * (Math.pow(c, 1 - alpha) - Math.pow(k, 1 - alpha)) / (1 - alpha);
    }

    /** The cutoff C that gives {@code mean} for the given α and k (bisection; the mean grows with C). */
    public static double maximumForMean(double alpha, double minimum, double mean) {
        double lo = minimum * (1 + 1e-9);
        double hi = minimum * 2;
        while (mean(alpha, minimum, hi) < mean) {
            hi *= 2;
            if (hi > 1e15) {
                throw new IllegalArgumentException("no cutoff below 1e15 gives mean " + mean);
            }
        }
        for (int i = 0; i < 200; i++) {
            double mid = Math.sqrt(lo * hi);
            if (mean(alpha, minimum, mid) < mean) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return (lo + hi) / 2;
    }

    /** The scale k that gives {@code mean} for the given α and C (bisection; the mean grows with k). */
    public static double minimumForMean(double alpha, double maximum, double mean) {
        if (!(mean < maximum)) {
            throw new IllegalArgumentException("mean " + mean + " must be below the cutoff " + maximum);
        }
        double lo = 1;
        double hi = maximum * (1 - 1e-9);
        for (int i = 0; i < 200; i++) {
            double mid = (lo + hi) / 2;
            if (mean(alpha, mid, maximum) < mean) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return (lo + hi) / 2;
    }
}
