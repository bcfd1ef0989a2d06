import { expect } from 'chai';
import { databaseAdvice, isLastingDatabaseFailure } from '../../src/adapters/mysql/database-advice.js';
import { DatabaseError, databaseErrorFrom } from '../../src/adapters/mysql/database-error.js';

/**
 * The TLS failures test/database-tls.test.ts cannot make on a MariaDB that takes TLS only: MySQL's
 * own refusal of a connection without TLS, a server that offers none, and a handshake cut short.
 * Each as mysql2 reports it.
 */
describe('what an operator reads when TLS to the database fails', function () {
  const url = 'mysql://pcat:s3cret@db.internal:3306/catalog';
  const driverError = (fields: { message: string } & Record<string, unknown>): DatabaseError => databaseErrorFrom(Object.assign(new Error(fields.message), fields));

  it('MySQL refusing a connection without TLS (require_secure_transport) names DATABASE_TLS, and stops the start', function () {
    const refused = driverError({ code: 'ER_SECURE_TRANSPORT_REQUIRED', errno: 3159, message: 'Connections using insecure transport are prohibited' });
    expect(databaseAdvice(refused, url, false)).to.equal('DATABASE_TLS: the server at db.internal:3306 takes TLS connections only (ER_SECURE_TRANSPORT_REQUIRED): ' +
      'set DATABASE_TLS=true, and DATABASE_TLS_CA_FILE if a private authority signed its certificate');
    expect(isLastingDatabaseFailure(refused)).to.equal(true);
  });

  it('a server that offers no TLS, with DATABASE_TLS=true, names DATABASE_TLS, and stops the start', function () {
    const none = driverError({ code: 'HANDSHAKE_NO_SSL_SUPPORT', fatal: true, message: 'Server does not support secure connection' });
    expect(databaseAdvice(none, url, true)).to.equal('DATABASE_TLS: the server at db.internal:3306 does not offer TLS (HANDSHAKE_NO_SSL_SUPPORT): ' +
      'turn TLS on at the server (ssl_cert, ssl_key), or correct the host and port in DATABASE_URL if they name another server');
    expect(isLastingDatabaseFailure(none)).to.equal(true);
  });

  it('a handshake cut short is no certificate refusal: the database is out of reach, and may come back', function () {
    const cut = driverError({ code: 'HANDSHAKE_SSL_ERROR', fatal: true, message: 'Client network socket disconnected before secure TLS connection was established' });
    expect(databaseAdvice(cut, url, true)).to.equal('DATABASE_URL: the TLS connection to db.internal:3306 failed (HANDSHAKE_SSL_ERROR: Client network socket ' +
      'disconnected before secure TLS connection was established): run the command again once the server answers');
    expect(isLastingDatabaseFailure(cut)).to.equal(false);
    expect(cut.storageUnavailable).to.equal(true);
  });

  it('a user refused over TLS is only the user, the password or the address: TLS is on already', function () {
    const refused = driverError({ code: 'ER_ACCESS_DENIED_ERROR', errno: 1045, message: "Access denied for user 'pcat'@'10.0.0.9' (using password: YES)" });
    const advice = databaseAdvice(refused, url, true);
    expect(advice).to.equal('DATABASE_URL: the server at db.internal:3306 refused user "pcat" (ER_ACCESS_DENIED_ERROR): the user or the password in DATABASE_URL is wrong, ' +
      'or the user may not connect from this machine');
    expect(advice).to.not.include('s3cret');
  });
});
