package shiri

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// VerifyShiriSignature reports whether rawBody was signed by Shiri with secret
// less than tolerance ago (5 * time.Minute is the documented tolerance).
func VerifyShiriSignature(rawBody []byte, signatureHeader, secret string, tolerance time.Duration) bool {
	timestamp := int64(-1)
	var signatures [][]byte
	for _, part := range strings.Split(signatureHeader, ",") {
		key, value, _ := strings.Cut(part, "=")
		switch key {
		case "t":
			if t, err := strconv.ParseInt(value, 10, 64); err == nil && t >= 0 {
				timestamp = t
			}
		case "v1":
			if sig, err := hex.DecodeString(value); err == nil && len(sig) > 0 {
				signatures = append(signatures, sig)
			}
		}
	}
	if timestamp < 0 {
		return false
	}
	if age := time.Since(time.Unix(timestamp, 0)); age > tolerance || age < -tolerance {
		return false // too old: a replay
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(timestamp, 10) + "."))
	mac.Write(rawBody)
	expected := mac.Sum(nil)
	// Any v1 will do: during a secret rotation there is one per secret, the new one first.
	for _, sig := range signatures {
		if hmac.Equal(sig, expected) {
			return true
		}
	}
	return false
}
