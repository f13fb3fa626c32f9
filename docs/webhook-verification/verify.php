<?php

/** True when $rawBody was signed by Shiri with $secret, less than $toleranceSeconds ago. */
function verify_shiri_signature(string $rawBody, string $signatureHeader, string $secret, int $toleranceSeconds = 300): bool
{
    $timestamp = null;
    $signatures = [];
    foreach (explode(',', $signatureHeader) as $part) {
        $pair = explode('=', $part, 2);
        if (count($pair) !== 2) {
            continue;
        }
        [$key, $value] = $pair;
        if ($key === 't' && preg_match('/^\d+$/', $value) === 1) {
            $timestamp = (int) $value;
        } elseif ($key === 'v1' && $value !== '') {
            $signatures[] = strtolower($value);
        }
    }
    if ($timestamp === null || abs(time() - $timestamp) > $toleranceSeconds) {
        return false; // no timestamp, or too old: a replay
    }
    $expected = hash_hmac('sha256', $timestamp . '.' . $rawBody, $secret);
    // Any v1 will do: during a secret rotation there is one per secret, the new one first.
    foreach ($signatures as $signature) {
        if (hash_equals($expected, $signature)) {
            return true;
        }
    }
    return false;
}
