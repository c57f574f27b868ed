/**
 * Where the gateway serves call-control's STIR/SHAKEN certificate (GetStirShakenCertificate).
 * Call-control names `${PUBLIC_URL}${stirShakenCertificatePath}` as every PASSporT's `x5u`.
 */
export const stirShakenCertificatePath = "/.well-known/stir-shaken/cert.pem";
