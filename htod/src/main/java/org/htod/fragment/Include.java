package org.htod.fragment;

/**
 * One include directive in a fragment's source: {@code path} is the fragment it names, and
 * {@code start} (inclusive) to {@code end} (exclusive) the characters of the directive itself.
 */
public record Include(String path, int start, int end) {}
