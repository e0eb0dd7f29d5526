async def test_health_answers_without_a_token(database, host_factory):
    host = await host_factory(database)
    response = await host.client.get("/api/pb/v1/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "version": "0.2.0"}
